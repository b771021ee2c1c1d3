// Media ids: the upload's time-ordered id and 96 random bits, `<id>-<24 hex digits>`. GET /media/{id}
// is public, and a file uploaded and not posted yet is served (docs/social.md, "Media"): with a
// time-ordered id alone, anyone could find such a file by trying ids near the time of a post. Files
// uploaded before the random part was added keep their plain ids.
import { isIdString } from './snowflake';

const RANDOM_HEX_DIGITS = 24;
/** How many random bytes a media id carries. */
export const MEDIA_ID_RANDOM_BYTES = RANDOM_HEX_DIGITS / 2;
const MEDIA_ID = new RegExp(`^([1-9][0-9]{0,18})(?:-[0-9a-f]{${RANDOM_HEX_DIGITS}})?$`);

/** A media id from a new time-ordered id and 12 random bytes (as hex). */
export function mediaId(timeOrderedId: string, random: Buffer): string {
  const hex = random.toString('hex');
  if (hex.length !== RANDOM_HEX_DIGITS) throw new Error(`a media id takes ${MEDIA_ID_RANDOM_BYTES} random bytes, not ${random.length}`);
  return `${timeOrderedId}-${hex}`;
}

/** Whether `s` has the shape of a media id: the current form, or a plain id of an older upload. */
export function isMediaId(s: string): boolean {
  const m = MEDIA_ID.exec(s);
  return m !== null && isIdString(m[1]);
}
