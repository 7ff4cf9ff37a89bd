// The failure converter of a client without codec keys: failures are written as Temporal's default
// writes them (plain), and failures another process encoded read as a placeholder instead of failing
// with "Unknown encoding". CommonJS, loaded by path, for the reasons in failure-converter.cjs.
'use strict';
/* global require, module */
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS on purpose: the SDK require()s this file */
const { TandemFailureConverter } = require('./failure-converter.cjs');

module.exports = { failureConverter: new TandemFailureConverter({ encodeCommonAttributes: false }) };
