import { GraphQLError, Kind, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { DocumentCheck } from '../modules/trusted-documents/index.ts';
import { MAX_TOKENS } from './limits.ts';

/**
 * A trusted document's check at registration (docs/partner-guide.md "Trusted documents"): it parses
 * within the token limit, holds an operation and passes graphql-js's validation against `schema`,
 * so a document registered today runs. The per-request limits (cost, depth) still apply when it runs.
 */
export function documentCheck(schema: GraphQLSchema): DocumentCheck {
  return (text) => {
    let document: DocumentNode;
    try {
      document = parse(text, { maxTokens: MAX_TOKENS });
    } catch (err) {
      return err instanceof GraphQLError ? withPlace(err) : 'it does not parse';
    }
    if (!document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION)) return 'it holds no operation';
    const [first] = validate(schema, document);
    return first ? withPlace(first) : undefined;
  };
}

const withPlace = (err: GraphQLError): string => {
  const at = err.locations?.[0];
  return at ? `${err.message} (line ${at.line}, column ${at.column})` : err.message;
};
