import type { EntityManager } from '@mikro-orm/postgresql';
import { trustedDocumentsOnlyOf } from '../resellers/index.ts';
import { findTrustedDocument } from './trusted-documents.service.ts';

/**
 * How long a process answers from its cache: a deleted document, or the setting switched on or off,
 * holds on every process within this time (the rule API keys follow too, src/platform/auth.ts).
 */
export const TRUSTED_DOCUMENT_CACHE_MS = 1000;
const CACHE_MAX = 10_000;

/**
 * Per process (src/graphql/yoga.ts makes one): a reseller's registered documents by hash, and its
 * `trusted_documents_only` setting, each read from the database at most once a second. Unknown
 * hashes are never cached, so a document registered a moment ago runs at once.
 */
export class TrustedDocumentCache {
  readonly #documents = new Map<string, { text: string; until: number }>();
  readonly #settings = new Map<string, { only: boolean; until: number }>();

  /** The text of the reseller's document with this hash, or undefined when it has none. */
  async document(em: EntityManager, resellerId: string, sha256: string): Promise<string | undefined> {
    const key = `${resellerId}:${sha256}`;
    // Process time: tests move the domain clock, and the cache bound is real time.
    const now = performance.now();
    const cached = this.#documents.get(key);
    if (cached && cached.until > now) return cached.text;
    const text = await findTrustedDocument(em, resellerId, sha256);
    if (text === undefined) {
      this.#documents.delete(key);
      return undefined;
    }
    if (this.#documents.size >= CACHE_MAX) this.#documents.clear(); // bounded; a full cache only costs a SELECT again
    this.#documents.set(key, { text, until: now + TRUSTED_DOCUMENT_CACHE_MS });
    return text;
  }

  /** Whether the reseller's client-session callers run only its trusted documents. */
  async trustedOnly(em: EntityManager, resellerId: string): Promise<boolean> {
    const now = performance.now();
    const cached = this.#settings.get(resellerId);
    if (cached && cached.until > now) return cached.only;
    const only = await trustedDocumentsOnlyOf(em, resellerId);
    if (this.#settings.size >= CACHE_MAX) this.#settings.clear();
    this.#settings.set(resellerId, { only, until: now + TRUSTED_DOCUMENT_CACHE_MS });
    return only;
  }
}
