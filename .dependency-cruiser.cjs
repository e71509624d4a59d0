/**
 * Architecture rules (see docs/architecture.md). Imports point down the list
 * contract → secrets → fire → locks → shim → reconcile → daemon → http → cli
 * (daemon/store under the rest of the daemon, its PostgreSQL and SQLite halves apart);
 * the contract is pure (no disk, network, clock or process access).
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Circular imports hide the direction of data flow.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contract-is-pure',
      severity: 'error',
      comment: 'src/contract holds pure functions: it may import only itself and node:crypto.',
      from: { path: '^src/contract/' },
      to: {
        pathNot: ['^src/contract/', '^node_modules/', '^crypto$', '^node:crypto$'],
      },
    },
    {
      name: 'contract-no-io-modules',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: {
        dependencyTypes: ['core'],
        pathNot: ['^crypto$'],
      },
    },
    {
      name: 'sdk-uses-contract-only',
      severity: 'error',
      comment: 'The app-side SDK ships to apps: it depends on the contract only.',
      from: { path: '^src/sdk/' },
      to: { path: '^src/', pathNot: ['^src/sdk/', '^src/contract/'] },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'The CLI is the top layer; rooms below never reach up into it.',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'lower-rooms-do-not-import-upper',
      severity: 'error',
      comment: 'fire/notify/locks/shim/reconcile must not import the daemon or http layers.',
      from: { path: '^src/(contract|secrets|fire|notify|locks|shim|reconcile)/' },
      to: { path: '^src/(daemon|http)/' },
    },
    {
      name: 'daemon-does-not-import-http',
      severity: 'error',
      comment:
        'The daemon boots and schedules; src/http serves it. Imports point from http to daemon.',
      from: { path: '^src/daemon/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'store-stands-alone',
      severity: 'error',
      comment:
        'The store is a seam under the daemon: it imports the contract and itself, never the rest of the daemon.',
      from: { path: '^src/daemon/store/' },
      to: { path: '^src/daemon/', pathNot: '^src/daemon/store/' },
    },
    {
      name: 'cluster-uses-the-seams',
      severity: 'error',
      comment:
        'The cluster depends on the Store and Coordination seams and the injected clock: no store implementation, no database driver.',
      from: { path: '^src/daemon/cluster/' },
      to: {
        path: [
          '^src/daemon/store/(pg/|postgres|sqlite|open)',
          'node_modules/(pg|pg-[^/]+|better-sqlite3)/',
          '^src/daemon/(scheduler|boot)[.]ts$',
        ],
      },
    },
    {
      name: 'postgres-does-not-import-sqlite',
      severity: 'error',
      comment:
        'The PostgreSQL store shares only the seam (types, records, limits, the migration shape) with SQLite.',
      from: { path: '^src/daemon/store/(pg/|postgres)' },
      to: { path: '^src/daemon/store/(sqlite[^/]*|migrations|migrations/[0-9][^/]*)[.]ts$' },
    },
    {
      name: 'sqlite-does-not-import-postgres',
      severity: 'error',
      from: { path: '^src/daemon/store/(sqlite[^/]*|migrations|migrations/[0-9][^/]*)[.]ts$' },
      to: { path: '^src/daemon/store/(pg/|postgres)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
