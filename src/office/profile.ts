/**
 * The private LibreOffice user profile of a worker. Its registrymodifications.xcu is what makes hostile
 * documents inert: macros never run (highest security level, execution disabled), links to other files are
 * never updated, and remote content cannot be fetched (untrusted referer links blocked, and every HTTP(S)
 * request sent to a proxy on a closed local port).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fontReplacementItems, linkBuiltFonts } from './fonts.js';

const item = (nodePath: string, name: string, type: string, value: string) =>
  `<item oor:path="${nodePath}"><prop oor:name="${name}" oor:op="fuse" oor:type="${type}"><value>${value}</value></prop></item>`;

/** Port 9 (discard) on the loopback: nothing listens there, so a proxied fetch fails at once. */
const DEAD_PROXY_HOST = '127.0.0.1';
const DEAD_PROXY_PORT = '9';

export function registryModifications(): string {
  const scripting = '/org.openoffice.Office.Common/Security/Scripting';
  const inet = '/org.openoffice.Inet/Settings';
  const items = [
    // 3 = "very high": only macros from trusted locations, and there are none.
    item(scripting, 'MacroSecurityLevel', 'xs:int', '3'),
    item(scripting, 'DisableMacrosExecution', 'xs:boolean', 'true'),
    item(scripting, 'BlockUntrustedRefererLinks', 'xs:boolean', 'true'),
    item(scripting, 'WarnAlienFormat', 'xs:boolean', 'false'),
    // Links (OLE/DDE/file links, linked sections and graphics): 2 = never update on load.
    item('/org.openoffice.Office.Writer/Content/Update', 'Link', 'xs:int', '2'),
    item('/org.openoffice.Office.Calc/Content/Update', 'Link', 'xs:int', '2'),
    // Manual proxy to a dead port for every scheme, with no exemptions.
    item(inet, 'ooInetProxyType', 'xs:int', '1'),
    item(inet, 'ooInetHTTPProxyName', 'xs:string', DEAD_PROXY_HOST),
    item(inet, 'ooInetHTTPProxyPort', 'xs:int', DEAD_PROXY_PORT),
    item(inet, 'ooInetHTTPSProxyName', 'xs:string', DEAD_PROXY_HOST),
    item(inet, 'ooInetHTTPSProxyPort', 'xs:int', DEAD_PROXY_PORT),
    item(inet, 'ooInetFTPProxyName', 'xs:string', DEAD_PROXY_HOST),
    item(inet, 'ooInetFTPProxyPort', 'xs:int', DEAD_PROXY_PORT),
    item(inet, 'ooInetNoProxy', 'xs:string', ''),
    // No first-start wizard, no update checks, no crash reporter, no recovery data written.
    item('/org.openoffice.Office.Common/Misc', 'FirstRun', 'xs:boolean', 'false'),
    item('/org.openoffice.Office.Common/Misc', 'ShowTipOfTheDay', 'xs:boolean', 'false'),
    item("/org.openoffice.Office.Jobs/Jobs/org.openoffice.Office.Jobs:Job['UpdateCheck']/Arguments", 'AutoCheckEnabled', 'xs:boolean', 'false'),
    item('/org.openoffice.Office.Recovery/AutoSave', 'Enabled', 'xs:boolean', 'false'),
    item('/org.openoffice.Office.Recovery/RecoveryInfo', 'Enabled', 'xs:boolean', 'false'),
    item('/org.openoffice.Office.Common/Save/Document', 'CreateBackup', 'xs:boolean', 'false'),
    // Layout parity with Word: stand-ins for Word's fonts that are not installed (fonts.ts).
    ...fontReplacementItems(),
  ];
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    items.join('\n') +
    '\n</oor:items>\n'
  );
}

/** Creates `<dir>/profile/user/registrymodifications.xcu` (and the `fonts` link); returns the profile's file:// URL. */
export function writeProfile(dir: string): string {
  const user = path.join(dir, 'profile', 'user');
  fs.mkdirSync(user, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(user, 'registrymodifications.xcu'), registryModifications(), { mode: 0o600 });
  // The metric-compatible substitutes of Office fonts (fonts.ts), on LibreOffice's font path of this profile.
  linkBuiltFonts(user);
  return fileUrl(path.join(dir, 'profile'));
}

/** A file:// URL for an absolute path (percent-encoded like LibreOffice expects). */
export function fileUrl(p: string): string {
  return 'file://' + p.split('/').map(encodeURIComponent).join('/');
}
