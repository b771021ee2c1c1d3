// `perch` — the command line of the appliance.
import { Argument, Command, CommanderError, Option } from 'commander';
import { UsageError, fail, ignoreClosedOutput, intOption } from './usage';
import { PRIVATE_UMASK } from '../store/file-modes';
import { VERSION } from '../version';
import { benchCommand, collectKeys, secondsOption, urlOption, type BenchFlags } from './bench';
import { IMPORT_FORMATS } from '../core/link-import';

// Each command's module is loaded when the command runs, not with the program: `perch --help`,
// `perch keygen` and the other short commands do not load the server (and `serve` does not load
// the other commands).
const serveCli = () => require('./serve') as typeof import('./serve');
const migrateCli = () => require('./migrate') as typeof import('./migrate');
const keysCli = () => require('./keys') as typeof import('./keys');
const statusCli = () => require('./status') as typeof import('./status');
const flagsCli = () => require('./flags') as typeof import('./flags');
const importCli = () => require('./import') as typeof import('./import');
const reindexCli = () => require('./reindex') as typeof import('./reindex');
const backupCli = () => require('./backup') as typeof import('./backup');

function withCommon(cmd: Command): Command {
  return cmd
    .option('--data <dir>', 'data directory (default: PERCH_DATA, else the config\'s "data", else ./data)')
    .option('--config <file>', 'JSON file deep-merged over config/default.json');
}

/**
 * A command that only groups others (`perch keys list`): run without one of them, it says so in one
 * line and exits 2, as any other missing argument does, instead of printing its whole help.
 */
function commandGroup(program: Command, name: string, description: string): Command {
  const group = program.command(name).description(description);
  return group.usage('<command> [options]').argument('[command]').action((unknown?: string) => {
    // With an action of its own, the group no longer gets commander's implicit help command.
    if (unknown === 'help') group.help();
    const names = group.commands.map((c) => c.name()).join(', ');
    throw new UsageError(
      unknown === undefined ? `${name} needs a command (${names}); see perch ${name} --help` : `${name} has no command '${unknown}' (${names})`,
    );
  });
}

export function buildProgram(): Command {
  const program = new Command('perch')
    .description('A self-hosted short-link service and microblog in one appliance.')
    .version(VERSION)
    .showSuggestionAfterError(true);

  withCommon(program.command('serve').description('run the HTTP server'))
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(intOption(0, 65535)))
    .addOption(new Option('--host <addr>', 'address to listen on'))
    .addOption(new Option('--threads <n>', 'HTTP threads sharing the port').argParser(intOption(1, 64)))
    .action((opts) => serveCli().serveCommand(opts));

  withCommon(program.command('migrate').description('apply pending database migrations')).action((opts) => migrateCli().migrateCommand(opts));

  withCommon(program.command('keygen').description('create an API key (and the user, if new)'))
    .requiredOption('--user <handle>', 'handle of the user: 1-30 of A-Z a-z 0-9 _')
    .option('--admin', 'the key may manage every user\'s links', false)
    .option('--json', 'print one JSON line', false)
    .action((opts) => keysCli().keygenCommand(opts));

  const keys = commandGroup(program, 'keys', 'list and revoke API keys');
  withCommon(keys.command('list').description('list key ids (never the keys themselves)'))
    .option('--user <user>', 'only the keys of this user (handle, @handle or user id)')
    .option('--json', 'print JSON', false)
    .action((opts) => keysCli().keysListCommand(opts));
  withCommon(keys.command('revoke').description('revoke a key by its id (and forget the push subscriptions made with it)').argument('<key-id>', 'id from `perch keys list`'))
    .action((keyId, opts) => keysCli().keysRevokeCommand(keyId, opts));

  const flags = commandGroup(program, 'flags', 'accounts throttled by the anomaly detector');
  withCommon(flags.command('list').description('list flagged accounts'))
    .option('--all', 'include flags that ended or were cleared', false)
    .option('--json', 'print JSON', false)
    .action((opts) => flagsCli().flagsListCommand(opts));
  withCommon(flags.command('clear').description('lift the flag of a user').argument('<user>', 'handle (or user id)'))
    .action((user, opts) => flagsCli().flagsClearCommand(user, opts));

  withCommon(
    program
      .command('import')
      .description("import links from another shortener's export, keeping their codes")
      .addArgument(new Argument('<format>', 'kutt, shlink, yourls or csv').choices(IMPORT_FORMATS))
      .argument('<file>', 'the export file'),
  )
    .requiredOption('--user <user>', 'the user who gets the links (handle, @handle or user id)')
    .option('--dry-run', 'check every entry and report, writing nothing', false)
    .action((format, file, opts) => importCli().importCommand(format, file, opts));
  withCommon(program.command('reindex').description('rebuild the search index from the stored posts (safe while the server runs)'))
    .option('--json', 'print one JSON line', false)
    .action((opts) => reindexCli().reindexCommand(opts));

  withCommon(program.command('status').description('show store counts, queue lags and node leases'))
    .option('--json', 'print JSON', false)
    .action((opts) => statusCli().statusCommand(opts));

  withCommon(program.command('backup').description('write a consistent snapshot of the data directory into DIR (new or empty), while the server runs or not').argument('<dir>', 'where the backup goes'))
    .option('--json', 'print the manifest as JSON', false)
    .action((dir: string, opts) => backupCli().backupCommand(dir, opts));

  withCommon(program.command('restore').description('make a data directory (absent or empty) from a backup in DIR').argument('<dir>', 'a directory written by perch backup'))
    .action((dir: string, opts) => backupCli().restoreCommand(dir, opts));

  program
    .command('bench')
    .description('measure the appliance: each scenario against a baseline run alongside (without a scenario: list them and their goals)')
    .argument('[scenario...]', 'redirect, shorten, posts, timeline, readwrite, fanout, limiter, search, suggest, notify-ws, mixed, or all')
    .addOption(new Option('--duration <seconds>', "seconds of each measured run (mixed: of the whole traffic); each scenario's default otherwise").argParser(secondsOption))
    .addOption(new Option('--connections <n>', "concurrent connections of the load; each scenario's default otherwise").argParser(intOption(1, 10_000)))
    .addOption(new Option('--threads <n>', 'HTTP threads of the perch server it starts').argParser(intOption(1, 64)))
    .addOption(new Option('--rounds <n>', 'interleaved baseline/perch/baseline rounds; the median is reported').argParser(intOption(1, 100)))
    .addOption(new Option('--url <url>', 'measure this running server instead of starting one (what it cannot seed is skipped)').argParser(urlOption))
    .addOption(new Option('--key <key>', 'an API key of the --url server, for scenarios that need a user (repeatable)').argParser(collectKeys).default([]))
    .option('--json <file>', 'write every figure to FILE: a JSON array, one object per scenario')
    .option('--quick', 'check the tool works: 1 s runs, one round, small data sets (not a measurement)', false)
    .action((scenarios: string[], flags: BenchFlags) => benchCommand(scenarios, flags));

  // Every command, nested ones too: a bad flag or value prints one line and exits 2.
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({ outputError: (str, write) => write(str.trim().split('\n')[0] + '\n') });
    cmd.commands.forEach(configure);
  };
  configure(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  // Everything perch creates (the database, LMDB, media, backups) is for its own user only.
  process.umask(PRIVATE_UMASK);
  ignoreClosedOutput();
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) process.exit(0);
      if (err.code === 'commander.executeSubCommandAsync') process.exit(err.exitCode);
      process.exit(2);
    }
    fail(err);
  }
}
