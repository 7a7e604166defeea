/**
 * Obsidian's additions to the DOM (`createEl`, `setText`, `addClass`, `empty`…), installed on the
 * test DOM's prototypes. They are declared globally by the `obsidian` package, so each one here is
 * type-checked against Obsidian's own declaration. Only the ones the plugin uses are here.
 */

type Info = DomElementInfo | string | undefined;

function applyInfo(el: HTMLElement, info: Info): void {
  if (info === undefined) return;
  const o: DomElementInfo = typeof info === "string" ? { text: info } : info;
  if (o.cls) el.className = Array.isArray(o.cls) ? o.cls.join(" ") : o.cls;
  if (o.text !== undefined) el.setText(o.text);
  for (const [name, value] of Object.entries(o.attr ?? {})) {
    if (value === null || value === false) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  if (o.title !== undefined) el.title = o.title;
  if (o.value !== undefined && "value" in el) (el as HTMLInputElement).value = o.value;
  if (o.type !== undefined) el.setAttribute("type", o.type);
  if (o.placeholder !== undefined) el.setAttribute("placeholder", o.placeholder);
  if (o.href !== undefined) el.setAttribute("href", o.href);
}

function make<K extends keyof HTMLElementTagNameMap>(
  parent: Node | null,
  tag: K,
  info: Info,
  callback?: (el: HTMLElementTagNameMap[K]) => void,
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  applyInfo(el, info);
  const o = typeof info === "object" ? info : undefined;
  const into = o?.parent ?? parent;
  if (into) {
    if (o?.prepend) into.insertBefore(el, into.firstChild);
    else into.appendChild(el);
  }
  callback?.(el);
  return el;
}

let installed = false;

/** Adds the helpers to the DOM of the current test environment (once). */
export function installDomHelpers(): void {
  if (installed) return;
  installed = true;
  const node = Node.prototype;
  node.createEl = function <K extends keyof HTMLElementTagNameMap>(
    this: Node,
    tag: K,
    info?: DomElementInfo | string,
    callback?: (el: HTMLElementTagNameMap[K]) => void,
  ): HTMLElementTagNameMap[K] {
    return make(this, tag, info, callback);
  };
  node.createDiv = function (this: Node, info?: DomElementInfo | string, callback?: (el: HTMLDivElement) => void): HTMLDivElement {
    return make(this, "div", info, callback);
  };
  node.createSpan = function (this: Node, info?: DomElementInfo | string, callback?: (el: HTMLSpanElement) => void): HTMLSpanElement {
    return make(this, "span", info, callback);
  };
  node.empty = function (this: Node): void {
    while (this.firstChild) this.removeChild(this.firstChild);
  };
  node.appendText = function (this: Node, value: string): void {
    this.appendChild(document.createTextNode(value));
  };
  node.detach = function (this: Node): void {
    this.parentNode?.removeChild(this);
  };

  const element = Element.prototype;
  element.setText = function (this: Element, value: string | DocumentFragment): void {
    this.empty();
    if (typeof value === "string") this.textContent = value;
    else this.appendChild(value);
  };
  element.getText = function (this: Element): string {
    return this.textContent ?? "";
  };
  element.addClass = function (this: Element, ...classes: string[]): void {
    this.classList.add(...classes);
  };
  element.removeClass = function (this: Element, ...classes: string[]): void {
    this.classList.remove(...classes);
  };
  element.toggleClass = function (this: Element, classes: string | string[], value: boolean): void {
    for (const cls of Array.isArray(classes) ? classes : [classes]) this.classList.toggle(cls, value);
  };
  element.hasClass = function (this: Element, cls: string): boolean {
    return this.classList.contains(cls);
  };
  element.setAttr = function (this: Element, name: string, value: string | number | boolean | null): void {
    if (value === null) this.removeAttribute(name);
    else this.setAttribute(name, String(value));
  };

  const scope = globalThis as unknown as {
    createEl: typeof createEl;
    createDiv: typeof createDiv;
    createSpan: typeof createSpan;
    createFragment: typeof createFragment;
  };
  scope.createEl = (tag, info, callback) => make(null, tag, info, callback);
  scope.createDiv = (info, callback) => make(null, "div", info, callback);
  scope.createSpan = (info, callback) => make(null, "span", info, callback);
  scope.createFragment = (callback) => {
    const fragment = document.createDocumentFragment();
    callback?.(fragment);
    return fragment;
  };
}
