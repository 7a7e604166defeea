/**
 * The plugin's settings and their tab. Each setting is described once (SETTINGS) and shown two
 * ways: as declarative definitions on Obsidian 1.13 and later (which also makes them findable in
 * the settings search), and drawn with `Setting` rows by `display()` on older versions.
 */
import { type App, PluginSettingTab, Setting, type Plugin, type SettingDefinitionItem } from "obsidian";
import type { Retriever, SearchMode } from "./api";

export interface QuireSettings {
  /** Where `quire serve` listens. */
  serverUrl: string;
  /** The server's token, when it was started with one. */
  token: string;
  /** The `quire` program: a name on the PATH or a full path. */
  quireBinary: string;
  /** Start `quire serve` for this vault when the plugin loads, and stop it when it unloads. */
  autoStart: boolean;
  /** Empty: the server's default (hybrid with embeddings, else BM25). */
  searchMode: SearchMode | "";
  /** How many notes a search shows. */
  searchLimit: number;
  /** Have the server's language model write a passage for each question first, and search with it too. */
  expandQuestions: boolean;
  /** How each question finds its passages, the ask view's dropdown's start; empty for the server's default (hybrid). */
  retriever: Retriever | "";
  /** The folder a saved conversation goes in (vault-relative; empty for the vault's top). */
  conversationFolder: string;
  /** The related-notes pane follows the paragraph at the cursor (a search when typing pauses) instead of the whole note. */
  followParagraph: boolean;
}

export const DEFAULT_SETTINGS: QuireSettings = {
  serverUrl: "http://127.0.0.1:7878",
  token: "",
  quireBinary: "quire",
  autoStart: false,
  searchMode: "",
  searchLimit: 10,
  expandQuestions: false,
  retriever: "",
  conversationFolder: "Conversations",
  followParagraph: false,
};

/** What the tab needs from the plugin. */
export interface SettingsHost extends Plugin {
  settings: QuireSettings;
  updateSettings(change: Partial<QuireSettings>): Promise<void>;
}

type Key = keyof QuireSettings;

interface TextSetting {
  key: "serverUrl" | "token" | "quireBinary" | "conversationFolder";
  kind: "text";
  name: string;
  desc: string;
  placeholder: string;
}
interface ToggleSetting {
  key: "autoStart" | "expandQuestions" | "followParagraph";
  kind: "toggle";
  name: string;
  desc: string;
}
interface ChoiceSetting {
  key: "searchMode" | "searchLimit" | "retriever";
  kind: "dropdown";
  name: string;
  desc: string;
  options: Record<string, string>;
}
type SettingDescription = TextSetting | ToggleSetting | ChoiceSetting;

const LIMITS = ["5", "10", "20", "30", "50"];

export const SETTINGS: SettingDescription[] = [
  {
    key: "serverUrl",
    kind: "text",
    name: "Server URL",
    desc: "Where quire serve listens for this vault, for example http://127.0.0.1:7878.",
    placeholder: DEFAULT_SETTINGS.serverUrl,
  },
  {
    key: "token",
    kind: "text",
    name: "Token",
    desc: "The server's token, if it was started with --token or QUIRE_TOKEN. Leave empty otherwise.",
    placeholder: "",
  },
  {
    key: "quireBinary",
    kind: "text",
    name: "Path of the quire program",
    desc: "The quire binary used to start the server: a name found on the PATH, or a full path such as ~/.cargo/bin/quire.",
    placeholder: DEFAULT_SETTINGS.quireBinary,
  },
  {
    key: "autoStart",
    kind: "toggle",
    name: "Start the server automatically",
    desc: "Run quire serve for this vault on the port of the server URL while the plugin is on, and stop it when the plugin stops.",
  },
  {
    key: "searchMode",
    kind: "dropdown",
    name: "Search mode",
    desc: "How search and questions find passages. Hybrid and meaning need the embedding model on the server.",
    options: { "": "Server default", hybrid: "Hybrid (words and meaning)", bm25: "Words only (BM25)", vector: "Meaning only" },
  },
  {
    key: "searchLimit",
    kind: "dropdown",
    name: "Notes per search",
    desc: "How many notes a search shows.",
    options: Object.fromEntries(LIMITS.map((n) => [n, n])),
  },
  {
    key: "expandQuestions",
    kind: "toggle",
    name: "Expand questions",
    desc: "Before searching for a question's passages, the server's language model writes a short passage that could answer it, and the search uses both. Finds notes worded unlike the question; each answer takes a few seconds longer. Needs a language model on the server.",
  },
  {
    key: "retriever",
    kind: "dropdown",
    name: "How questions find passages",
    desc: "Search finds passages by their words (and meaning); tree descent has the language model walk down the vault's outline (folders, notes, headings); auto searches, then descends when the evidence is weak or the question is about the vault's structure. The ask view starts each conversation on this, and its dropdown changes it for the questions that follow. Tree descent and auto need a language model on the server.",
    options: { "": "Server default (search)", hybrid: "Search", tree: "Tree descent", auto: "Auto" },
  },
  {
    key: "conversationFolder",
    kind: "text",
    name: "Folder for saved conversations",
    desc: "Where \"Save as a note\" in the ask view proposes the note of a conversation. Leave empty for the top of the vault.",
    placeholder: DEFAULT_SETTINGS.conversationFolder,
  },
  {
    key: "followParagraph",
    kind: "toggle",
    name: "Related notes follow the paragraph",
    desc: "The related-notes pane shows the notes about the paragraph at the cursor, searched when typing pauses, instead of the notes related to the whole note. The pane has the same switch.",
  },
];

/** Turns what a control holds into the setting's type; a value of the wrong kind is ignored. */
export function settingValue(key: Key, value: unknown): Partial<QuireSettings> {
  switch (key) {
    case "autoStart":
    case "expandQuestions":
    case "followParagraph":
      return typeof value === "boolean" ? { [key]: value } : {};
    case "searchLimit": {
      const n = Number(value);
      return Number.isInteger(n) && n >= 1 && n <= 50 ? { searchLimit: n } : {};
    }
    case "searchMode":
      return value === "" || value === "hybrid" || value === "bm25" || value === "vector" ? { searchMode: value } : {};
    case "retriever":
      return value === "" || value === "hybrid" || value === "tree" || value === "auto" ? { retriever: value } : {};
    case "conversationFolder":
      return typeof value === "string" ? { conversationFolder: value.trim().replace(/^\/+|\/+$/g, "") } : {};
    default:
      return typeof value === "string" ? { [key]: value.trim() } : {};
  }
}

/** The saved settings over the defaults, each checked. */
export function loadSettings(saved: unknown): QuireSettings {
  let settings = { ...DEFAULT_SETTINGS };
  if (saved && typeof saved === "object") {
    for (const key of Object.keys(DEFAULT_SETTINGS) as Key[]) {
      settings = { ...settings, ...settingValue(key, (saved as Record<string, unknown>)[key]) };
    }
  }
  return settings;
}

export class QuireSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly host: SettingsHost,
  ) {
    super(app, host);
  }

  override getSettingDefinitions(): SettingDefinitionItem[] {
    return SETTINGS.map((setting) => {
      switch (setting.kind) {
        case "text":
          return { name: setting.name, desc: setting.desc, control: { type: "text", key: setting.key, placeholder: setting.placeholder } };
        case "toggle":
          return { name: setting.name, desc: setting.desc, control: { type: "toggle", key: setting.key } };
        case "dropdown":
          return { name: setting.name, desc: setting.desc, control: { type: "dropdown", key: setting.key, options: setting.options } };
      }
    });
  }

  override getControlValue(key: string): unknown {
    const value = this.host.settings[key as Key];
    return typeof value === "number" ? String(value) : value;
  }

  override async setControlValue(key: string, value: unknown): Promise<void> {
    if (key in DEFAULT_SETTINGS) await this.host.updateSettings(settingValue(key as Key, value));
  }

  /** The same settings drawn with `Setting` rows, for Obsidian before 1.13. */
  override display(): void {
    const { containerEl } = this;
    containerEl.empty();
    for (const setting of SETTINGS) {
      const row = new Setting(containerEl).setName(setting.name).setDesc(setting.desc);
      const current = this.getControlValue(setting.key);
      switch (setting.kind) {
        case "text":
          row.addText((text) =>
            text
              .setPlaceholder(setting.placeholder)
              .setValue(String(current))
              .onChange((value) => this.setControlValue(setting.key, value)),
          );
          break;
        case "toggle":
          row.addToggle((toggle) => toggle.setValue(current === true).onChange((value) => this.setControlValue(setting.key, value)));
          break;
        case "dropdown":
          row.addDropdown((dropdown) =>
            dropdown
              .addOptions(setting.options)
              .setValue(String(current))
              .onChange((value) => this.setControlValue(setting.key, value)),
          );
          break;
      }
    }
  }
}
