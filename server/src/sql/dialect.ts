/** The databases a store runs on: one SQLite file, or PostgreSQL for several processes (docs/operations/scale-out.md). */
export type DialectName = 'sqlite' | 'postgres';

/**
 * What the one schema of a module spells differently on each database. Everything else in a
 * migration is SQL both accept as written (CHECK constraints, partial indexes, ALTER TABLE ADD COLUMN).
 */
export interface Dialect {
  readonly name: DialectName;
  /** Timestamps in milliseconds and counts: SQLite's INTEGER holds 64 bits, PostgreSQL's only 32. */
  readonly bigint: string;
  /** A small number (the key of a one-row table). */
  readonly smallint: string;
  readonly boolean: string;
  /** The false of `boolean`, as a column default. */
  readonly false: string;
  /** A JSON document the database parses (PostgreSQL's JSONB); SQLite keeps its text. */
  readonly json: string;
  /**
   * The first column of a table whose lists and cursors follow insertion order, with its comma:
   * SQLite's rowid gives that order, PostgreSQL needs a `seq` column.
   */
  readonly seqColumn: string;
  /** `seqColumn` as the earliest tables on PostgreSQL spell it (a sequence, not an identity, and not unique). */
  readonly serialSeqColumn: string;
  /** The insertion order as the last key of an index: SQLite's indexes end in the rowid by themselves. */
  readonly seqKey: string;
  /** An integer primary key numbering the rows in insertion order (SQLite's rowid alias). */
  readonly serialKey: string;
}

/** One step of a module's tables, written once for both databases. */
export interface Migration {
  /** The one database the step is for; both when absent. */
  readonly only?: DialectName;
  /** The step's statements on the database `d` describes. */
  sql(d: Dialect): string;
}

export const SQLITE: Dialect = {
  name: 'sqlite', bigint: 'INTEGER', smallint: 'INTEGER', boolean: 'INTEGER', false: '0', json: 'TEXT',
  seqColumn: '', serialSeqColumn: '', seqKey: '', serialKey: 'INTEGER PRIMARY KEY',
};

// Quote documents and the other JSON held for display stay TEXT on both: they are kept exactly as
// written (docs/billing.md), which JSONB would not do.
export const POSTGRES: Dialect = {
  name: 'postgres', bigint: 'BIGINT', smallint: 'SMALLINT', boolean: 'BOOLEAN', false: 'false', json: 'JSONB',
  seqColumn: 'seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,', serialSeqColumn: 'seq BIGSERIAL,', seqKey: ', seq',
  serialKey: 'BIGSERIAL PRIMARY KEY',
};
