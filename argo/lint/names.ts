// Argo's rules for the names inside a workflow (workflow/validate/validate.go, v3.7.9:
// validateWorkflowFieldNames, isValidWorkflowFieldName, isValidParamOrArtifactName). Templates, steps
// and DAG tasks are "workflow fields": they become node names and `steps.<name>` / `tasks.<name>`
// references, so only letters, digits and '-' (a letter or digit first), at most 128 characters.
// Parameters and artifacts may also use '_'. Every one needs a name, unique in its list. Argo refuses
// the workflow otherwise; so does `tandem argo lint`, at the name's line, before anything runs.

const WORKFLOW_FIELD_NAME = /^[a-zA-Z0-9][-a-zA-Z0-9]*$/;
const WORKFLOW_FIELD_MAX = 128;
const PARAM_OR_ARTIFACT_NAME = /^[-a-zA-Z0-9_]+$/;
/** Argo's words for a parameter or artifact name (and a globalName) it refuses. */
export const PARAM_OR_ARTIFACT_RULE = "Parameter/Artifact name must consist of alpha-numeric characters, '_' or '-' e.g. my_param_1, MY-PARAM-1";

export const isParamOrArtifactName = (name: string): boolean => PARAM_OR_ARTIFACT_NAME.test(name);

export type NameKind = 'field' | 'parameter';

/** Why Argo refuses this name, or undefined when it takes it. */
export function nameProblem(name: string, kind: NameKind): string | undefined {
  if (kind === 'parameter') {
    return isParamOrArtifactName(name) ? undefined : `name ${JSON.stringify(name)} is invalid: ${PARAM_OR_ARTIFACT_RULE}`;
  }
  const why: string[] = [];
  if (name.length > WORKFLOW_FIELD_MAX) why.push(`must be no more than ${WORKFLOW_FIELD_MAX} characters`);
  if (!WORKFLOW_FIELD_NAME.test(name)) why.push("name must consist of alpha-numeric characters or '-', and must start with an alpha-numeric character (e.g. My-name1-2, 123-NAME)");
  return why.length ? `name ${JSON.stringify(name)} is invalid: ${why.join('; ')}` : undefined;
}

/**
 * Checks a list of named items as Argo does: each needs a name, valid for its kind and not given
 * before in the list. Calls `report` with the item's index, whether the problem is in its `name`
 * field (false: the item has none), and the message.
 */
export function checkNames(items: readonly unknown[], kind: NameKind, report: (index: number, atName: boolean, message: string) => void): void {
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const name = item && typeof item === 'object' ? (item as Record<string, unknown>).name : undefined;
    if (name === undefined || name === null || name === '') return report(i, false, 'name is required');
    const text = String(name);
    const bad = nameProblem(text, kind);
    if (bad) report(i, true, bad);
    else if (seen.has(text)) report(i, true, `name ${JSON.stringify(text)} is not unique`);
    seen.add(text);
  });
}
