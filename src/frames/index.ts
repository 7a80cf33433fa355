export type {
  ChangeScore,
  FrameMime,
  FrameRef,
  IncomingFrame,
  ScoredFrame,
} from "./frame-types.js";
