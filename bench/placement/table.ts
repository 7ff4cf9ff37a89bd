// What the bench tables share: number formatting and the all-policies-off baseline the rows build on.
export const fmt = (x: number, d = 2) => x.toFixed(d);
export const hours = (s: number) => fmt(s / 3600, 1);

/** Every switchable policy off: a row turns on exactly what it names. */
export const ALL_OFF = { quotas: false, fairShare: false, qos: false, preemption: false, topology: false, oversubscription: false, deadlines: false, cost: false, thermal: false } as const;
