/**
 * The part of React 19's API the dashboard uses, typed here because the repository carries no
 * `@types/react`: hooks, `createRoot`, and JSX intrinsic elements with the DOM attributes and
 * event handlers the pages pass. Keep it to what the code calls.
 */
declare module "react" {
  export type ReactNode =
    | ReactElement
    | string
    | number
    | bigint
    | boolean
    | null
    | undefined
    | Iterable<ReactNode>;
  export interface ReactElement {
    type: unknown;
    props: unknown;
    key: string | null;
  }
  export interface RefObject<T> {
    current: T;
  }
  export type Dispatch<A> = (value: A) => void;
  export type SetStateAction<S> = S | ((previous: S) => S);
  // biome-ignore lint/suspicious/noConfusingVoidType: an effect returns nothing or its cleanup
  export type EffectCallback = () => void | (() => void);
  export function useState<S>(initial: S | (() => S)): [S, Dispatch<SetStateAction<S>>];
  export function useState<S = undefined>(): [
    S | undefined,
    Dispatch<SetStateAction<S | undefined>>,
  ];
  export function useReducer<S, A>(
    reducer: (state: S, action: A) => S,
    initial: S,
  ): [S, Dispatch<A>];
  export function useEffect(effect: EffectCallback, deps?: readonly unknown[]): void;
  export function useLayoutEffect(effect: EffectCallback, deps?: readonly unknown[]): void;
  export function useMemo<T>(factory: () => T, deps: readonly unknown[]): T;
  export function useCallback<T extends (...args: never[]) => unknown>(
    callback: T,
    deps: readonly unknown[],
  ): T;
  export function useRef<T>(initial: T): RefObject<T>;
  export function useSyncExternalStore<T>(
    subscribe: (onChange: () => void) => () => void,
    snapshot: () => T,
  ): T;
  export function useId(): string;
  export const Fragment: unique symbol;
  export const StrictMode: (props: { children?: ReactNode }) => ReactElement;
}

declare module "react-dom/client" {
  import type { ReactNode } from "react";
  export interface Root {
    render(node: ReactNode): void;
    unmount(): void;
  }
  export function createRoot(container: Element): Root;
}

declare module "react/jsx-runtime" {
  import type { ReactElement, ReactNode, RefObject } from "react";

  /** An event React hands a handler: the DOM event with a typed `currentTarget`. */
  type Handler<E extends Event, T> = (event: E & { currentTarget: T }) => void;

  interface DomProps<T> {
    children?: ReactNode;
    key?: string | number;
    ref?: RefObject<T | null> | ((element: T | null) => void);
    className?: string;
    id?: string;
    title?: string;
    role?: string;
    style?: Record<string, string | number>;
    hidden?: boolean;
    tabIndex?: number;
    dangerouslySetInnerHTML?: { __html: string };
    onClick?: Handler<MouseEvent, T>;
    onKeyDown?: Handler<KeyboardEvent, T>;
    onSubmit?: Handler<SubmitEvent, T>;
    onChange?: Handler<Event, T>;
    onInput?: Handler<Event, T>;
    onScroll?: Handler<Event, T>;
    onLoad?: Handler<Event, T>;
    onError?: Handler<Event, T>;
    [attribute: `aria-${string}` | `data-${string}`]: string | number | boolean | undefined;
  }
  interface FormProps<T> extends DomProps<T> {
    name?: string;
    value?: string | number;
    defaultValue?: string | number;
    checked?: boolean;
    defaultChecked?: boolean;
    disabled?: boolean;
    type?: string;
    placeholder?: string;
    autoComplete?: string;
    spellCheck?: boolean;
    rows?: number;
    min?: number | string;
    max?: number | string;
    step?: number | string;
    required?: boolean;
    htmlFor?: string;
    readOnly?: boolean;
    noValidate?: boolean;
    inputMode?: string;
  }
  interface OtherProps<T> extends FormProps<T> {
    href?: string;
    target?: string;
    rel?: string;
    src?: string;
    alt?: string;
    width?: number | string;
    height?: number | string;
    colSpan?: number;
    open?: boolean;
    dateTime?: string;
    // SVG
    viewBox?: string;
    d?: string;
    x?: number | string;
    y?: number | string;
    x1?: number | string;
    x2?: number | string;
    y1?: number | string;
    y2?: number | string;
    cx?: number | string;
    cy?: number | string;
    r?: number | string;
    fill?: string;
    stroke?: string;
    strokeWidth?: number | string;
    strokeDasharray?: string;
    points?: string;
    textAnchor?: string;
    dominantBaseline?: string;
    preserveAspectRatio?: string;
    xmlns?: string;
  }

  export namespace JSX {
    type Element = ReactElement;
    interface ElementChildrenAttribute {
      children: unknown;
    }
    interface IntrinsicAttributes {
      key?: string | number;
    }
    interface IntrinsicElements {
      input: FormProps<HTMLInputElement>;
      select: FormProps<HTMLSelectElement>;
      textarea: FormProps<HTMLTextAreaElement>;
      form: FormProps<HTMLFormElement>;
      button: FormProps<HTMLButtonElement>;
      [element: string]: OtherProps<HTMLElement>;
    }
  }
  export function jsx(type: unknown, props: unknown, key?: unknown): ReactElement;
  export function jsxs(type: unknown, props: unknown, key?: unknown): ReactElement;
  export const Fragment: unique symbol;
}
