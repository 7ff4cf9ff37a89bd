// kwok Stage resources (kwok.x-k8s.io/v1alpha1, passed to kwok with --config) that decide what the
// simulated pods do. kwok v0.7 replaces its default pod stages when a config names any, so these are
// the whole pod lifecycle: ready (every pod gets a loopback IP and Ready), finish (pods owned by a
// Job end with an exit code the test chose), delete (a deleted pod goes away at once).
//
// Every pod becomes Ready after kwok.tandem.dev/boot (default at once) and stays Running unless a Job
// owns it. What a Job's pod does is set by pod annotations (JobBackend `podAnnotations`, or a stage's
// kubernetes.annotations):
//   kwok.tandem.dev/run         how long the pod runs, a Go duration ("1500ms"); default 300ms
//   kwok.tandem.dev/exit-codes  comma-separated exit codes, one per Tandem attempt: the attempt is the
//                               number that ends the Job's name (Tandem names attempt N "<…>-N"),
//                               attempts past the list use its last entry; "oom" ends the container
//                               OOMKilled (137). Default "0".
// So "3" fails every attempt with exit 3, "1,0" fails attempt 1 and succeeds attempt 2.
// Pod-level retries inside one Job (backoffLimit) make identical pods, which kwok cannot tell apart:
// each ends like the first.
// Templates are Go templates with sprig (kwok's pkg/utils/gotpl); selectors are jq expressions.

export const KWOK_ANNOTATIONS = {
  /** Time from scheduled to Ready, a Go duration ("4s"); default at once. E.g. vLLM loading weights. */
  boot: 'kwok.tandem.dev/boot',
  run: 'kwok.tandem.dev/run',
  exitCodes: 'kwok.tandem.dev/exit-codes',
  /** What the vLLM stand-in behind the load balancer answers for this pod (load-balancer.ts). */
  vllm: 'kwok.tandem.dev/vllm',
} as const;

const podReady = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.podIP'
      operator: 'DoesNotExist'
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.annotations["${KWOK_ANNOTATIONS.boot}"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: ContainersReady
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: PodReadyToStartContainers
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
`;

const podFinish = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-finish
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.metadata.ownerReferences.[].kind'
      operator: 'In'
      values:
      - 'Job'
  delay:
    durationMilliseconds: 300
    durationFrom:
      expressionFrom: '.metadata.annotations["${KWOK_ANNOTATIONS.run}"]'
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $annotations := or .metadata.annotations dict }}
      {{ $labels := or .metadata.labels dict }}
      {{ $codes := splitList "," ( or ( index $annotations "${KWOK_ANNOTATIONS.exitCodes}" ) "0" ) }}
      {{ $attempt := atoi ( or ( regexFind "[0-9]+$" ( or ( index $labels "job-name" ) "" ) ) "1" ) }}
      {{ $i := max 0 ( min ( sub $attempt 1 ) ( sub ( len $codes ) 1 ) ) }}
      {{ $code := trim ( index $codes $i ) }}
      {{ $exit := 0 }}
      {{ $reason := "Completed" }}
      {{ if eq $code "oom" }}{{ $exit = 137 }}{{ $reason = "OOMKilled" }}
      {{ else if ne $code "0" }}{{ $exit = atoi $code }}{{ $reason = "Error" }}{{ end }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: Ready
      - lastTransitionTime: {{ $now | Quote }}
        status: "False"
        reason: PodCompleted
        type: ContainersReady
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        started: false
        restartCount: 0
        state:
          terminated:
            exitCode: {{ $exit }}
            reason: {{ $reason | Quote }}
            finishedAt: {{ $now | Quote }}
      {{ end }}
      phase: {{ if eq $exit 0 }}Succeeded{{ else }}Failed{{ end }}
`;

const podDelete = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  next:
    finalizers:
      empty: true
    delete: true
`;

/** The kwok config file's contents: the pod stages above plus any `extra` Stage documents. */
export function kwokStages(extra: string[] = []): string {
  return [podReady, podFinish, podDelete, ...extra].map((s) => s.trim()).join('\n---\n') + '\n';
}
