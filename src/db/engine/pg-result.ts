import { createRequire } from 'node:module';

// pg (8.23, pinned) reads a statement's column list (its RowDescription, sent again with every
// execution, prepared statements included) into `Result.addFields`, which builds the empty row
// every row of the result is spread from. It builds it on `Object.create(null)`, which V8 keeps in
// dictionary mode, and copying that out per row is several times slower than from a plain object,
// a cost every row of every result pays, most on a booking's joined reads of 30 columns
// (docs/adr/0011-rows-without-a-dictionary-mode-object.md).
// The null prototype is there for a column named `__proto__`, which would set a plain object's
// prototype instead of becoming a property: such a result takes pg's own path.

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}
type TypeParser = (value: string) => unknown;
interface ResultState {
  fields: FieldDescription[];
  _parsers: TypeParser[];
  _types?: { getTypeParser(oid: number, format: string): TypeParser };
  _prebuiltEmptyResultObject: Record<string, null>;
}
interface TypesModule {
  getTypeParser(oid: number, format: string): TypeParser;
}

const fromHere = createRequire(import.meta.url);
const resultPath = fromHere.resolve('pg/lib/result.js');
const Result = fromHere(resultPath) as { prototype: { addFields(this: ResultState, fields: FieldDescription[]): void } };
// The type parsers pg's own addFields falls back on: its own pg-types.
const types = createRequire(resultPath)('pg-types') as TypesModule;
const pgsOwn = Result.prototype.addFields;

function addFields(this: ResultState, fields: FieldDescription[]): void {
  if (fields.some((f) => f.name === '__proto__')) return pgsOwn.call(this, fields);
  this.fields = fields;
  if (fields.length) this._parsers = new Array<TypeParser>(fields.length);
  const row: Record<string, null> = {};
  for (let i = 0; i < fields.length; i++) {
    const { name, dataTypeID, format } = fields[i];
    row[name] = null;
    this._parsers[i] = (this._types ?? types).getTypeParser(dataTypeID, format || 'text');
  }
  this._prebuiltEmptyResultObject = row;
}

/** Every pg result of this process builds its rows' template on a plain object; idempotent. */
export function buildRowsOnPlainObjects(): void {
  Result.prototype.addFields = addFields;
}
