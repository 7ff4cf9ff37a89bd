// Stand-ins for the two things a real GPU cluster has and this one cannot run: a cloud load balancer
// and the vLLM containers. A test double of a load-balancer controller (what MetalLB or a cloud
// provider does) gives every Service of type LoadBalancer an ingress at 127.0.0.1:<port>, written to
// the Service's status as a controller would. A connection there goes to one of the Service's ready
// endpoints, round robin: the pods its selector matches that are Ready and not terminating — what the
// EndpointSlice controller would publish, had the API server not refused loopback endpoint addresses
// (ValidateEndpointIP), which kwok's pods have here. That endpoint's pod
// "runs" the vLLM-compatible server of fake/vllm.ts, started for it on 127.0.0.1 with the pod's own
// container args (--model, --served-model-name) and its kwok.tandem.dev/vllm annotation (ok, dead,
// wrong-model, bad-completion). Only 127.0.0.1 is ever dialed: never a pod or Service IP.
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { startFakeVllm, type FakeVllm, type VllmBehaviour } from './fake/vllm.js';
import type { ControlPlane } from './control-plane.js';
import { KWOK_ANNOTATIONS } from './kwok-stages.js';

export interface LoadBalancer {
  /** Connections each pod received, by pod name (which revision served). */
  readonly served: Map<string, number>;
  stop(): Promise<void>;
}

interface Frontend {
  server: Server;
  port: number;
  next: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startLoadBalancer(cp: ControlPlane, namespace = cp.namespace, opts: { everyMs?: number } = {}): Promise<LoadBalancer> {
  const clients = cp.clients(namespace);
  const frontends = new Map<string, Frontend>();
  const pods = new Map<string, Promise<FakeVllm>>(); // by pod uid
  const sockets = new Set<Socket>();
  const served = new Map<string, number>();
  let stopped = false;

  const podServer = (pod: V1Pod): Promise<FakeVllm> => {
    const uid = pod.metadata!.uid!;
    let s = pods.get(uid);
    if (!s) {
      const c = pod.spec!.containers[0]!;
      const behaviour = (pod.metadata?.annotations?.[KWOK_ANNOTATIONS.vllm] ?? 'ok') as VllmBehaviour;
      s = startFakeVllm([...(c.command ?? []), ...(c.args ?? [])], behaviour, pod.metadata!.name!);
      pods.set(uid, s);
    }
    return s;
  };

  const route = async (svc: string, fe: Frontend, socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    try {
      const svcObj = await clients.core.readNamespacedService({ name: svc, namespace });
      const selector = Object.entries(svcObj.spec?.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
      const candidates = selector ? (await clients.core.listNamespacedPod({ namespace, labelSelector: selector })).items : [];
      const ready = candidates
        .filter((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        .sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
      if (!ready.length) return socket.destroy(); // no backend: the connection is reset, as a real LB does
      const pod = ready[fe.next++ % ready.length]!;
      const target = pod.metadata!.name!;
      const backend = await podServer(pod);
      served.set(target, (served.get(target) ?? 0) + 1);
      const upstream = connect(backend.port, '127.0.0.1');
      sockets.add(upstream);
      upstream.once('close', () => sockets.delete(upstream));
      upstream.on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    } catch {
      socket.destroy();
    }
  };

  const frontend = async (svc: V1Service) => {
    const name = svc.metadata!.name!;
    const fe: Frontend = { server: createServer(), port: 0, next: 0 };
    fe.server.on('connection', (s) => void route(name, fe, s));
    await new Promise<void>((r) => fe.server.listen(0, '127.0.0.1', r));
    fe.port = (fe.server.address() as AddressInfo).port;
    frontends.set(name, fe);
    // A patch, not a replace of the listed object: a write in between (Tandem's own) would be a 409.
    const loadBalancer = { ingress: [{ ip: '127.0.0.1', ipMode: 'VIP', ports: [{ port: fe.port, protocol: 'TCP' }] }] };
    await clients.core.patchNamespacedServiceStatus({ name, namespace, body: [{ op: 'add', path: '/status/loadBalancer', value: loadBalancer }] });
  };

  const reconcile = async () => {
    const services = (await clients.core.listNamespacedService({ namespace })).items.filter((s) => s.spec?.type === 'LoadBalancer');
    const names = new Set(services.map((s) => s.metadata!.name!));
    for (const svc of services) if (!frontends.has(svc.metadata!.name!)) await frontend(svc);
    for (const [name, fe] of frontends) {
      if (!names.has(name)) {
        fe.server.close();
        frontends.delete(name);
      }
    }
    // A pod that is gone takes its server with it.
    const live = new Set((await clients.core.listNamespacedPod({ namespace })).items.map((p) => p.metadata!.uid!));
    for (const [uid, s] of pods) {
      if (!live.has(uid)) {
        pods.delete(uid);
        void s.then((v) => v.close());
      }
    }
  };

  const loop = (async () => {
    while (!stopped) {
      await reconcile().catch(() => undefined); // the apiserver may be stopping; try again
      await sleep(opts.everyMs ?? 200);
    }
  })();

  return {
    served,
    async stop() {
      stopped = true;
      await loop;
      for (const s of sockets) s.destroy();
      for (const fe of frontends.values()) fe.server.close();
      for (const s of pods.values()) (await s).close();
    },
  };
}
