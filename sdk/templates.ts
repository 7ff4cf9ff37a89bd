// The files the package ships, by absolute path (the package's `exports` map hides dist/ itself; the
// same files are also exported as `tandem/templates/<path>`): the demo pipeline spec, the Argo
// templates, the Grafana dashboard, the pipeline spec's JSON schema. In a checkout they are the
// sources under templates/; in the package, their copies under dist/templates/.
import { fileURLToPath } from 'node:url';

const at = (p: string) => fileURLToPath(new URL(`../templates/${p}`, import.meta.url));

export const TEMPLATES = {
  /** templates/examples/demo-pipeline.yaml: the demo pipeline (`tandem run`, `tandem demo`). */
  demoSpec: at('examples/demo-pipeline.yaml'),
  /** Argo Workflows templates Tandem runs (`tandem argo submit`). */
  argo: { hybridTraining: at('argo/hybrid-training.yaml'), molecularDynamics: at('argo/molecular-dynamics.yaml') },
  /** The Grafana dashboard of the tandem_* metrics (import it into Grafana). */
  grafanaDashboard: at('grafana/tandem.json'),
  /** The pipeline spec's JSON schema (editors, `yaml-language-server: $schema=`). */
  pipelineSchema: at('pipeline.schema.json'),
  /** The example tenant policy (TANDEM_TENANT_POLICY_FILE). */
  tenantPolicy: at('tenant-policy.yaml'),
} as const;

/** The absolute path of a shipped template, e.g. templatePath('argo/hybrid-training.yaml'). */
export const templatePath = (relative: string): string => at(relative);
