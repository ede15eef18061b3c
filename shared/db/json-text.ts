/**
 * JSON text that PostgreSQL rendered (row_to_json, json_build_object, …) and that goes into a response unchanged:
 * the service neither parses the rows into objects nor serialises them again (services/http/json-response.ts).
 * Select it as `::text`, so that the driver hands over the string instead of parsing it.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
