import { eq, sql } from 'drizzle-orm';
import type { Db } from '../client.js';
import { settings } from '../schema/index.js';

/** Operator settings, typed by name. Add a setting here with its default; the admin CLI and panel list these. */
export const SETTING_DEFAULTS = {
  ai_enabled: false as boolean,
};
export type SettingName = keyof typeof SETTING_DEFAULTS;

export function settingsRepository(db: Db) {
  return {
    async get<K extends SettingName>(name: K): Promise<(typeof SETTING_DEFAULTS)[K]> {
      const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, name));
      return (row?.value ?? SETTING_DEFAULTS[name]) as (typeof SETTING_DEFAULTS)[K];
    },

    async set<K extends SettingName>(name: K, value: (typeof SETTING_DEFAULTS)[K]): Promise<void> {
      await db
        .insert(settings)
        .values({ key: name, value })
        .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: sql`now()` } });
    },

    async all(): Promise<Record<SettingName, unknown>> {
      const rows = await db.select().from(settings);
      const stored = Object.fromEntries(rows.map((r) => [r.key, r.value]));
      return { ...SETTING_DEFAULTS, ...stored } as Record<SettingName, unknown>;
    },
  };
}
