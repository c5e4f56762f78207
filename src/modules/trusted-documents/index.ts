// The trusted-documents module's front door: what other modules, the surfaces and the CLI may use of it
// (docs/architecture.md "Module boundaries"). Files inside the module import each other directly.
export * from './trusted-documents.service.ts';
export { TrustedDocumentCache, TRUSTED_DOCUMENT_CACHE_MS } from './trusted-document-cache.ts';
