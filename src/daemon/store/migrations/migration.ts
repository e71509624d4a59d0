/** The shape of one numbered schema migration. */
export interface Migration {
  /** Applied in ascending order; recorded in `schema_migrations`. Never renumber a released one. */
  version: number;
  /** Short name, recorded beside the version. */
  name: string;
  /** Statements run together in the migration's transaction. */
  sql: string;
}

/** Raised when the database was migrated by a newer cronix than this one. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
  ) {
    super(
      `ledger schema version ${databaseVersion} is newer than this cronix knows (${knownVersion}); ` +
        'run a cronix at least as new as the one that last opened this data dir',
    );
    this.name = 'SchemaTooNewError';
  }
}
