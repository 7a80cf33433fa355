import type { ReactNode } from "react";
import { navigate } from "../router.js";

/** An in-dashboard link: a real `<a href>` (opens in a new tab too) that navigates in place. */
export function Link(props: {
  to: string;
  children?: ReactNode;
  className?: string;
  current?: boolean;
}) {
  return (
    <a
      href={props.to}
      className={props.className}
      aria-current={props.current ? "page" : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}
