// The version of this perch, from package.json: what `perch --version`, /readyz, the
// perch_build_info metric, `perch status` and backup manifests report.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const PACKAGE_JSON_PATH = join(__dirname, '..', '..', 'package.json');

export const VERSION: string = (JSON.parse(readFileSync(PACKAGE_JSON_PATH, 'utf8')) as { version: string }).version;
