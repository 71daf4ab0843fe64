import { z } from 'zod';
// Imported, not read at run time, so the bundle in dist/ carries its own version.
import packageJson from '../../package.json' with { type: 'json' };

/** loadgate's version, the one its release tags carry (`v<version>`, see CHANGELOG.md). */
export const VERSION: string = z.object({ version: z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/) }).parse(packageJson).version;
