// The spa module's GraphQL types, queries and connections (filled in by the catalogue work).
export {};
