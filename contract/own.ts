// Lookups by a name users choose (a tenant, a site, a hold id) in a plain record: only the record's
// own entries count. `record[name]` would also find what every object inherits, so tenant
// `constructor` got Object's constructor function as its "quota", which has no limits: its stages
// ran unbooked past the "*" quota and the ledger's bookkeeping broke. Sandbox-safe (workflows use it).

/** `record[key]` when it is the record's own entry, else undefined. */
export function own<V>(record: Readonly<Record<string, V>> | undefined, key: string): V | undefined {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/** Whether `key` is an own entry of `record` (`key in record` also sees inherited names). */
export function hasOwn(record: object | undefined, key: string): boolean {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record, key);
}
