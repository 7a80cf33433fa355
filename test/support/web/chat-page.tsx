/**
 * A test page for the AI SDK's own `useChat` (`@ai-sdk/react`, unchanged) against the Spool
 * server: the chat's id comes from `?chat=`, the token from `localStorage["spool.token"]` (sent as
 * a bearer header), and `resume: true` makes a reloaded page reattach to the answer still
 * streaming. It shows each message with its role and the chat's status, and nothing else.
 */
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type UIMessage } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";

const chatId = new URLSearchParams(location.search).get("chat") ?? "chat";
const transport = new DefaultChatTransport({
  api: "/api/chat",
  headers: () => ({ Authorization: `Bearer ${localStorage.getItem("spool.token") ?? ""}` }),
});

/** The text parts of a message, joined. */
function textOf(message: UIMessage): string {
  return message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function Chat() {
  const [input, setInput] = useState("");
  const { messages, sendMessage, status } = useChat({ id: chatId, transport, resume: true });
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    void sendMessage({ text: input });
    setInput("");
  };
  return (
    <main>
      <p data-testid="status">{status}</p>
      <ol>
        {messages.map((message) => (
          <li key={message.id} data-role={message.role} className="message">
            {textOf(message)}
          </li>
        ))}
      </ol>
      <form onSubmit={submit}>
        <input
          aria-label="Message"
          value={input}
          onChange={(event) => setInput(event.currentTarget.value)}
        />
        <button type="submit">Send</button>
      </form>
    </main>
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<Chat />);
