import type { RemoteResult, RemoteShell } from '../../src/bench/aws/remote-shell.ts';

/**
 * SSM Run Command's answers for the `aws` CLI stand-in, with the output limits of the real
 * service (AWS Systems Manager API Reference), which are why src/bench/aws/ssm-shell.ts
 * reads a command's output from GetCommandInvocation:
 * - ListCommandInvocations with details: each CommandPlugin's Output, stdout and stderr as
 *   AWS-RunShellScript joins them, is at most 2,500 characters (data type CommandPlugin,
 *   Output: "Length Constraints: Maximum length of 2500");
 * - GetCommandInvocation: StandardOutputContent is "the first 24,000 characters written by
 *   the plugin to stdout" and StandardErrorContent "the first 8,000 characters written by
 *   the plugin to stderr", both empty until the command finished; an instance the command
 *   did not target is InvocationDoesNotExist.
 * The scripts run through `shell` (the loopback bench's bash).
 */
export const LIST_OUTPUT_LIMIT = 2_500;
export const STDOUT_LIMIT = 24_000;
export const STDERR_LIMIT = 8_000;

/** AWS-RunShellScript joins stdout and stderr in a plugin's Output with this line. */
const STDERR_SEPARATOR = '----------ERROR-------';

/** An error answer as the CLI prints it: exit 254 and the service's message. */
export class SsmError extends Error {}

interface Command {
  ids: string[];
  done?: Map<string, RemoteResult>;
}

export class SsmStandin {
  private readonly commands = new Map<string, Command>();
  private next = 1;

  constructor(private readonly shell: RemoteShell) {}

  sendCommand(ids: string[], script: string | undefined, timeoutSec: number): string {
    if (!ids.length || script === undefined)
      throw new SsmError('An error occurred (ValidationException) when calling the SendCommand operation: instance ids and commands are required');
    const id = `00000000-0000-4000-8000-${String(this.next++).padStart(12, '0')}`;
    const command: Command = { ids };
    this.commands.set(id, command);
    void this.shell.run(ids, script, { timeoutSec }).then((results) => (command.done = results));
    return id;
  }

  private command(id: string, operation: string): Command {
    const command = this.commands.get(id);
    if (!command) throw new SsmError(`An error occurred (InvalidCommandId) when calling the ${operation} operation: `);
    return command;
  }

  /** Terminal status of one instance's result, as SSM reports it (an undeliverable command is Failed, StatusDetails Undeliverable). */
  private static status(r: RemoteResult): { Status: string; StatusDetails: string } {
    const undeliverable = r.status === 'Undeliverable';
    return { Status: undeliverable ? 'Failed' : r.status, StatusDetails: undeliverable ? 'Undeliverable' : r.status };
  }

  listCommandInvocations(id: string, details: boolean): unknown {
    const command = this.command(id, 'ListCommandInvocations');
    const invocations = command.ids.map((instanceId) => {
      const r = command.done?.get(instanceId);
      if (!r) return { InstanceId: instanceId, Status: 'InProgress', StatusDetails: 'InProgress', CommandPlugins: [] };
      const status = SsmStandin.status(r);
      const joined = r.stderr ? `${r.stdout}\n${STDERR_SEPARATOR}\n${r.stderr}` : r.stdout;
      const plugins = details
        ? [{ Name: 'aws:runShellScript', Status: status.Status, ResponseCode: r.exitCode ?? -1, Output: joined.slice(0, LIST_OUTPUT_LIMIT) }]
        : [];
      return { InstanceId: instanceId, ...status, CommandPlugins: plugins };
    });
    return { CommandInvocations: invocations };
  }

  getCommandInvocation(id: string, instanceId: string): unknown {
    const command = this.command(id, 'GetCommandInvocation');
    if (!command.ids.includes(instanceId)) throw new SsmError('An error occurred (InvocationDoesNotExist) when calling the GetCommandInvocation operation: ');
    const r = command.done?.get(instanceId);
    const base = {
      CommandId: id,
      InstanceId: instanceId,
      DocumentName: 'AWS-RunShellScript',
      PluginName: 'aws:runShellScript',
      StandardOutputUrl: '',
      StandardErrorUrl: '',
    };
    if (!r) return { ...base, Status: 'InProgress', StatusDetails: 'InProgress', ResponseCode: -1, StandardOutputContent: '', StandardErrorContent: '' };
    return {
      ...base,
      ...SsmStandin.status(r),
      ResponseCode: r.exitCode ?? -1,
      StandardOutputContent: r.stdout.slice(0, STDOUT_LIMIT),
      StandardErrorContent: r.stderr.slice(0, STDERR_LIMIT),
    };
  }
}
