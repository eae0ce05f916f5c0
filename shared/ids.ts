import { ulid } from 'ulid';

/** Ids are a type prefix and a lower-case ULID: sortable by creation, no `_` or `/` after the prefix. */
export const newId = (prefix: 'acc' | 'usr' | 'wf' | 'wh' | 'ex' | 'ap' | 'ar') => `${prefix}_${ulid().toLowerCase()}`;

/** Key and session ids sit inside a token (`dyk_<id>_...`), so they carry no prefix of their own. */
export const newTokenId = () => ulid().toLowerCase();
