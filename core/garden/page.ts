/** A page of a list and the opaque token that continues it (Kubernetes' `continue`). */
export interface Page<T> {
  items: T[];
  continue?: string;
}

export interface PageRequest {
  limit: number;
  continue?: string;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 500;
