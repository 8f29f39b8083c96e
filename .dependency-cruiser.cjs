// The layers of src/, lowest first. A module may import its own layer and the layers below it, never
// one above (type-only imports included). `npm test` runs this through `npm run depcheck`.
const LAYERS = [
  'internal',  // small helpers defined once (isRecord, compareText, canonical JSON, ids, YAML positions): imports nothing of src
  'model',     // shapes every layer shares: the loaded project, the store interface, run types, filters
  'errors',    // the one error catalog (src/errors.ts)
  'language',  // templates, {{= }} expressions, conditions, URL templates, cron: pure functions
  'nodes',     // one file per node kind + the registry
  'project',   // find, load and check a project
  'users',     // the workspace users file
  'store',     // SQLite and PostgreSQL stores
  'telemetry', // OpenTelemetry spans of runs and steps (the SDK loaded only when exporting) and Prometheus metrics
  'flow',      // the engine that runs a flow (shared by the CLI, the server and the scheduler)
  'schedule',  // the due index, the tick, notifications
  'openapi',   // the document generator
  'testing',   // `flowctl test`
  'serve',     // the serve runtime: workspace, store pool, reload, cron timer, listener
  'http',      // the h3 app (routes read the runtime they are given)
  'cli',       // commands
  'index',     // the public API
]
const pathOf = (layer) => (layer === 'errors' || layer === 'index' ? `^src/${layer}\\.ts$` : `^src/${layer}/`)

module.exports = {
  forbidden: [
    ...LAYERS.slice(0, -1).map((layer, i) => ({
      name: `layer-${layer}`,
      comment: `src/${layer} may not import a higher layer (${LAYERS.slice(i + 1).join(', ')}); see the layer list in .dependency-cruiser.cjs and the README`,
      severity: 'error',
      from: { path: pathOf(layer) },
      to: { path: LAYERS.slice(i + 1).map(pathOf).join('|') },
    })),
    {
      name: 'no-circular',
      comment: 'modules import each other in one direction only',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      // The layer rules already rule folder cycles out between layers; this also covers sub-folders
      // (http/routes, http/pages) and says it in the words of the rule.
      name: 'no-folder-cycles',
      comment: 'the folders of src/ import each other in one direction only',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      // A folder missing from LAYERS would escape every layer rule.
      name: 'in-a-layer',
      comment: 'every folder of src/ is listed in LAYERS of .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: LAYERS.map(pathOf).join('|') },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
}
