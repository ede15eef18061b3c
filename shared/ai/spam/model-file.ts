/**
 * Where the committed spam model lives and how it is read: once per process, because parsing and
 * building the log-likelihood table takes tens of milliseconds and every AI job needs it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NaiveBayesModel, type SpamModelFile } from './naive-bayes.js';

export const SPAM_MODEL_PATH = fileURLToPath(new URL('../models/spam-model.json', import.meta.url));

const cache = new Map<string, NaiveBayesModel>();

/** Reads and parses the model file; repeated calls with the same path return the same instance. */
export function loadSpamModel(path: string = SPAM_MODEL_PATH): NaiveBayesModel {
  let model = cache.get(path);
  if (!model) {
    const file = JSON.parse(readFileSync(path, 'utf8')) as SpamModelFile;
    model = new NaiveBayesModel(file);
    cache.set(path, model);
  }
  return model;
}

export function readSpamModelFile(path: string = SPAM_MODEL_PATH): SpamModelFile {
  return JSON.parse(readFileSync(path, 'utf8')) as SpamModelFile;
}

/** Header fields pretty-printed (reviewable in a diff), the three big arrays on one line each. */
export function writeSpamModelFile(file: SpamModelFile, path: string = SPAM_MODEL_PATH): number {
  const { vocabulary, spamCounts, hamCounts, ...head } = file;
  const lines = [
    JSON.stringify(head, null, 2).replace(/\n}$/, ','),
    `  "vocabulary": ${JSON.stringify(vocabulary)},`,
    `  "spamCounts": ${JSON.stringify(spamCounts)},`,
    `  "hamCounts": ${JSON.stringify(hamCounts)}`,
    '}',
    '',
  ];
  const text = lines.join('\n');
  writeFileSync(path, text);
  return Buffer.byteLength(text);
}
