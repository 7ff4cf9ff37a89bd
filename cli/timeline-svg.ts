// `tandem runs show <id> --svg file` draws the same picture as the web view's run page (`tandem ui`);
// the drawing lives with the web view, in ui/timeline-svg.ts.
export { timelineSvg } from '../ui/timeline-svg.js';
