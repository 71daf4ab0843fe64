import type { NodesServer } from '../../chat-servers/chat-server.ts';
import { runOnNodes, type BenchNode, type RemoteShell } from './remote-shell.ts';
import { clientLicenceScript, configureScript, installScript, restoreDatasetScript, startScript, stopScript, versionScript, type Slot } from './scripts.ts';

/**
 * Puts the app nodes in the state a run starts from, as the seed benches do between
 * runs (on a duet bench, one slot's service on every node): every Mattermost stopped, the dataset restored from its pristine copy (so both
 * versions start from the same data), this side's release installed and its config
 * overrides applied, then node 0 started first (it runs the schema migrations alone)
 * and the others after it. Each step names the node that failed.
 */
export interface SideSetup {
  label: string;
  /** The release every node must report; absent for a build URL, which runs whatever version it holds. */
  version?: string;
  releaseUrl: string;
  configPatch: Record<string, unknown>;
}

export interface AppNodesOptions {
  /** What the nodes run: the version it must report, the answer it must give after a start. */
  server: NodesServer;
  shell: RemoteShell;
  nodes: readonly BenchNode[];
  /** Node 0's start may include migrations of a large dataset. */
  firstStartTimeoutSec: number;
  startTimeoutSec: number;
  onStep?: (line: string) => void;
  /**
   * A duet bench's slot: these AppNodes drive that slot's service, database and port on
   * every node, and leave the other slot's alone. Unset on a sequential bench.
   */
  slot?: { name: Slot; appPort: number };
}

export class AppNodes {
  /** The release every node has installed, to skip a reinstall between runs of one side. */
  private installed: string | undefined;

  constructor(private readonly o: AppNodesOptions) {
    if (o.nodes.length === 0) throw new RangeError('the bench has no app node');
  }

  /** Returns each node's running version (X-Version-Id), checked against the side. */
  async prepare(side: SideSetup): Promise<Map<string, string>> {
    const { shell, nodes } = this.o;
    const slot = this.o.slot?.name;
    const onStep = this.o.onStep ?? (() => {});
    const step = (line: string): void => onStep(slot ? `slot ${slot}: ${line}` : line);
    const [first, ...rest] = nodes as [BenchNode, ...BenchNode[]];
    step(`stopping Mattermost on ${nodes.map((n) => n.name).join(', ')}`);
    await runOnNodes(shell, nodes, stopScript(slot), 'stop Mattermost', { timeoutSec: 300 });
    step(`restoring the dataset on ${first.name} from its pristine copy`);
    await runOnNodes(shell, [first], restoreDatasetScript(slot), 'restore the dataset', { timeoutSec: 4 * 3600 });
    if (this.installed !== side.releaseUrl) {
      step(`installing ${side.releaseUrl}`);
      this.installed = undefined;
      await runOnNodes(shell, nodes, installScript(side.releaseUrl, slot), `install Mattermost ${side.label}`, { timeoutSec: 1800 });
      this.installed = side.releaseUrl;
    }
    step(`applying the config${Object.keys(side.configPatch).length ? ` with ${JSON.stringify(side.configPatch)}` : ''}`);
    await runOnNodes(shell, nodes, configureScript(side.configPatch, slot), `configure Mattermost ${side.label}`, { timeoutSec: 120 });
    step(`starting ${first.name} (schema migrations run here)`);
    await runOnNodes(shell, [first], startScript(this.o.firstStartTimeoutSec, slot), `start Mattermost ${side.label}`, {
      timeoutSec: this.o.firstStartTimeoutSec + 60,
    });
    // Asked only now, of a server started on the restored database with the dump's licence
    // rows cleared: Mattermost prefers a licence in its database to the licence file and
    // removes an expired one at start (platform/license.go LoadLicense, app/server.go), so a
    // server started on an uncleaned dump says "unlicensed" whatever the bench's file holds.
    step(`asking ${first.name} for its licence`);
    await this.requireLicence();
    if (rest.length) {
      step(`starting ${rest.map((n) => n.name).join(', ')}`);
      await runOnNodes(shell, rest, startScript(this.o.startTimeoutSec, slot), `start Mattermost ${side.label}`, { timeoutSec: this.o.startTimeoutSec + 60 });
    }
    const versions = await runOnNodes(shell, nodes, versionScript(slot), 'read the Mattermost version', { timeoutSec: 60 });
    const expected = side.version === undefined ? undefined : this.o.server.expectedVersion(side.version);
    const running = new Map<string, string>();
    const wrong: string[] = [];
    for (const [name, result] of versions) {
      const id = result.stdout.trim();
      running.set(name, id);
      if (expected !== undefined && !id.startsWith(`${expected}.`) && id !== expected) wrong.push(`${name} runs ${id || 'an unknown version'}`);
    }
    if (wrong.length) throw new Error(`after installing ${side.label}, ${wrong.join(', ')} (expected ${String(expected)}.*)`);
    return running;
  }

  /**
   * Refuses an unlicensed server (licence.ts), asking node 0 over the remote shell: the
   * proxy and app addresses are private to the VPC, which a GitHub runner is not in.
   * Thrown as an InputError: no later run can be judged either.
   */
  async requireLicence(): Promise<void> {
    const first = this.o.nodes[0] as BenchNode;
    const where = `${first.name} (${first.id})${this.o.slot ? `, slot ${this.o.slot.name}` : ''}`;
    const result = (
      await runOnNodes(this.o.shell, [first], clientLicenceScript(this.o.slot?.appPort), 'ask Mattermost for its licence', { timeoutSec: 60 })
    ).get(first.name);
    let answer: unknown;
    try {
      answer = JSON.parse(result?.stdout ?? '');
    } catch {
      throw new Error(`Mattermost on ${where} answered /api/v4/license/client with something other than JSON: ${(result?.stdout ?? '').slice(0, 200)}`);
    }
    this.o.server.checkStarted(answer, where);
  }

  /** Stops Mattermost everywhere (clean-up); problems are returned, not thrown. */
  async stop(): Promise<string[]> {
    try {
      await runOnNodes(this.o.shell, this.o.nodes, stopScript(this.o.slot?.name), 'stop Mattermost', { timeoutSec: 300 });
      return [];
    } catch (error) {
      return [(error as Error).message];
    }
  }
}
