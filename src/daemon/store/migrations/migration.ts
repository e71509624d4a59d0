/** The shape of one numbered schema migration. */
export interface Migration {
  /** Applied in ascending order; recorded in `schema_migrations`. Never renumber a released one. */
  version: number;
  /** Short name, recorded beside the version. */
  name: string;
  /** Statements run together in the migration's transaction. */
  sql: string;
}
