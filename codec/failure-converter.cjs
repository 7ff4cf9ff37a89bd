// Failure messages and stack traces under the payload codec. Temporal's DefaultFailureConverter with
// `encodeCommonAttributes` moves a failure's message and stack trace into `encodedAttributes`, a
// payload the codec then encrypts like any other; the history keeps only the placeholder message
// "Encoded failure" and an empty stack trace.
//
// Why a CommonJS file, in plain JavaScript: the SDK takes a failure converter only as a module path
// (`failureConverterPath`). The worker and the client `require()` it, and the bundler puts it into the
// workflow code. A TypeScript ESM module cannot be `require()`d under Jest's ESM mode (nor by Node
// without a TypeScript hook), so this one is CommonJS, needs no compiling (`npm run build` copies it),
// and is sandbox-safe: nothing but @temporalio/common. Its paths: codec/index.ts.
//
// Reading is tolerant: a failure whose encoded attributes this process cannot read (no codec, or not
// the key) keeps the placeholder message, saying why, instead of throwing "Unknown encoding" from deep
// in the SDK, so a client without the key still sees that a run failed, and where.
'use strict';
/* global require, module */
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose: the SDK require()s this file */
const { DefaultFailureConverter, METADATA_ENCODING_KEY } = require('@temporalio/common');

const ENCODED_FAILURE_MESSAGE = 'Encoded failure';

function readable(payload, converter) {
  try {
    converter.fromPayload(payload);
    return true;
  } catch {
    return false;
  }
}

// The failure infos whose details are payloads (the converter decodes them into the error).
const DETAILS = [
  ['applicationFailureInfo', 'details'],
  ['canceledFailureInfo', 'details'],
  ['timeoutFailureInfo', 'lastHeartbeatDetails'],
  ['resetWorkflowFailureInfo', 'lastHeartbeatDetails'],
];

class TandemFailureConverter extends DefaultFailureConverter {
  failureToError(failure, payloadConverter, context) {
    if (failure.encodedAttributes && !readable(failure.encodedAttributes, payloadConverter)) {
      const encoding = failure.encodedAttributes.metadata?.[METADATA_ENCODING_KEY];
      // (No TextDecoder: this also runs in the workflow sandbox.)
      const how = encoding ? String.fromCharCode(...encoding) : 'unknown encoding';
      failure = { ...failure, encodedAttributes: undefined, message: `${failure.message || ENCODED_FAILURE_MESSAGE} (${how}: this client has no codec key to read it)` };
    }
    // Details this process cannot read are left out of the error rather than failing all of it.
    for (const [info, field] of DETAILS) {
      const payloads = failure[info]?.[field]?.payloads;
      if (payloads?.length && !payloads.every((p) => readable(p, payloadConverter))) failure = { ...failure, [info]: { ...failure[info], [field]: { payloads: [] } } };
    }
    return super.failureToError(failure, payloadConverter, context);
  }

  // A keyed worker's refusal of a run's input (contract/refused-payload.ts) stays in clear: it holds
  // no data of the run, and the client it is for has no key to read an encoded message.
  errorToFailure(err, payloadConverter, context) {
    if (this.options.encodeCommonAttributes && err && err.type === 'PayloadRefused') return plain.errorToFailure(err, payloadConverter, context);
    return super.errorToFailure(err, payloadConverter, context);
  }
}

const plain = new TandemFailureConverter({ encodeCommonAttributes: false });

module.exports = {
  ENCODED_FAILURE_MESSAGE,
  TandemFailureConverter,
  /** Encodes messages and stack traces (with the codec on); reads encoded and plain failures alike. */
  failureConverter: new TandemFailureConverter({ encodeCommonAttributes: true }),
};
