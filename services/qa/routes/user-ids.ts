import type { Db } from '../../../shared/db/client.js';
import { userProfilesRepository } from '../../../shared/db/repositories/user-profiles.js';
import { NotFoundError } from '../../../shared/errors.js';
import type { IdSet } from '../../../shared/db/repositories/id-set.js';
import { idList } from '../ids.js';

/**
 * The users a `/users/{ids}/…` route reads: one user, who must exist (else a 404, as GET /users/{id}), or up to 100
 * ids separated by `;`, unknown ones left out (as GET /users/{ids}). Bad ids are a 400 (ids.ts).
 */
export function knownUsers(db: Db) {
  const profiles = userProfilesRepository(db);
  return {
    /** One id as a number (its lists keep their names, so their cursors stay valid), several as an array. */
    async resolve(raw: string): Promise<IdSet> {
      const { ids, single, exists } = idList(raw);
      if (!single) return ids;
      if (!exists || !(await profiles.find(ids[0]!))) throw new NotFoundError('User not found');
      return ids[0]!;
    },
  };
}
