export {
  applyObservation,
  type CalibrationEntry,
  type CalibrationObservation,
  type CalibrationOptions,
  type CalibrationState,
  calibrationFrom,
  calibrationReducer,
  correctionFactor,
  DEFAULT_CALIBRATION,
} from "./calibration.js";
export {
  CHARS_PER_TOKEN,
  createTokenEstimator,
  DEFAULT_CHARS_PER_TOKEN,
  type EstimateInput,
  type EstimateRequest,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  REQUEST_OVERHEAD_TOKENS,
  type TokenEstimator,
  type TokenEstimatorOptions,
} from "./token-estimator.js";
