/**
 * `quire serve` started by the plugin for this vault ("Start the server automatically"): one
 * child process, spawned as `quire --vault <vault folder> serve --port <port>`, stopped when the
 * plugin unloads. Its stderr is kept so that a failure can be shown as quire wrote it.
 */
import { spawn, type ChildProcess } from "child_process";
import { homedir } from "os";

export interface ServerLaunch {
  /** The `quire` program: a name on the PATH or a path (`~/` is the home folder). */
  binary: string;
  /** The vault's folder on disk. */
  vault: string;
  port: number;
  /** Passed as QUIRE_TOKEN (not on the command line, where other users could read it). */
  token: string;
}

/** How long the server may take to print that it listens. */
const START_TIMEOUT_MS = 30_000;
/** How long it may take to stop after Ctrl-C before it is killed. */
const STOP_TIMEOUT_MS = 5_000;
const LISTENING = /quire serve: listening on (http:\/\/\S+?)\/?\s*$/m;

export function expandHome(path: string): string {
  return path === "~" || path.startsWith("~/") ? homedir() + path.slice(1) : path;
}

/** The end of what the server wrote on stderr: its last lines, at most 1,500 characters. */
export function stderrTail(stderr: string): string {
  const lines = stderr.trimEnd().split(/\r?\n/).slice(-8).join("\n");
  return lines.length > 1500 ? `…${lines.slice(-1500)}` : lines;
}

export class ServerProcess {
  private child: ChildProcess | null = null;
  private listening: Promise<void> | null = null;
  private stderr = "";

  /** `onExit` hears of a server that stops by itself after it was listening. */
  constructor(private readonly onExit: (message: string) => void) {}

  get running(): boolean {
    return this.child !== null;
  }

  /** The process id, while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Starts the server unless it runs already. Resolves once it listens; rejects with what went
   * wrong (the program is missing, or it stopped at once, with its stderr).
   */
  start(launch: ServerLaunch): Promise<void> {
    if (this.listening) return this.listening;
    this.stderr = "";
    const binary = expandHome(launch.binary.trim() || "quire");
    const env = { ...process.env };
    if (launch.token.trim()) env.QUIRE_TOKEN = launch.token.trim();
    const child = spawn(binary, ["--vault", launch.vault, "serve", "--port", String(launch.port)], {
      env,
      stdio: ["ignore", "ignore", "pipe"],
      windowsHide: true,
    });
    this.child = child;
    const listening = new Promise<void>((resolve, reject) => {
      let listened = false;
      const timer = window.setTimeout(() => {
        reject(new Error(`quire serve did not start within ${START_TIMEOUT_MS / 1000} s:\n${stderrTail(this.stderr)}`));
        this.stop();
      }, START_TIMEOUT_MS);
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (piece: string) => {
        this.stderr = (this.stderr + piece).slice(-20_000);
        if (!listened && LISTENING.test(this.stderr)) {
          listened = true;
          window.clearTimeout(timer);
          resolve();
        }
      });
      child.on("error", (error: NodeJS.ErrnoException) => {
        window.clearTimeout(timer);
        this.forget(child);
        reject(
          new Error(
            error.code === "ENOENT"
              ? `There is no quire program at "${binary}". Install quire, or set the path of the quire program in the plugin's settings.`
              : `Cannot start ${binary}: ${error.message}`,
          ),
        );
      });
      // `close`, not `exit`: by then all of stderr has been read.
      child.on("close", (code, signal) => {
        window.clearTimeout(timer);
        const stopped = this.child !== child;
        this.forget(child);
        const how = signal ? `signal ${signal}` : `exit code ${code ?? "?"}`;
        const message = `quire serve stopped (${how}):\n${stderrTail(this.stderr) || "(it wrote nothing)"}`;
        if (!listened) reject(new Error(message));
        else if (!stopped) this.onExit(message);
      });
    });
    this.listening = listening;
    return listening;
  }

  private forget(child: ChildProcess): void {
    if (this.child === child) {
      this.child = null;
      this.listening = null;
    }
  }

  /** Stops the server like Ctrl-C does (it finishes a running sync), and kills it if it hangs. */
  stop(): void {
    const child = this.child;
    if (!child) return;
    this.forget(child);
    child.kill("SIGINT");
    const timer = window.setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }, STOP_TIMEOUT_MS);
    child.once("exit", () => window.clearTimeout(timer));
  }
}
