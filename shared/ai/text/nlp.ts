/**
 * The one wink-nlp instance of the process. Loading the English model costs ~100 ms and a few MB,
 * so it is created lazily on first use and then shared by every analysis.
 */
import winkNLP, { type ItsFunction, type WinkMethods } from 'wink-nlp';
import model from 'wink-eng-lite-web-model';

let instance: WinkMethods | undefined;

export function nlp(): WinkMethods {
  instance ??= winkNLP(model);
  return instance;
}

export function splitSentences(text: string): string[] {
  if (text.trim() === '') return [];
  return nlp().readDoc(text).sentences().out();
}

export interface WordToken {
  /** The text as written. */
  value: string;
  /** Lower-cased normal form. */
  normal: string;
  stem: string;
  pos: string;
  stopWord: boolean;
}

/** Word tokens only (no punctuation, URLs, numbers or e-mails), with what every analysis needs. */
export function wordTokens(text: string): WordToken[] {
  if (text.trim() === '') return [];
  const { its } = nlp();
  const tokens = nlp().readDoc(text).tokens();
  const types = tokens.out(its.type);
  const values = tokens.out();
  const normals = tokens.out(its.normal);
  // wink-nlp's typings declare its.stem with a document-level signature; at run time it is a token helper.
  const stems = tokens.out(its.stem as unknown as ItsFunction<string>) as string[];
  const pos = tokens.out(its.pos);
  const stop = tokens.out(its.stopWordFlag) as unknown as boolean[];
  const words: WordToken[] = [];
  for (let i = 0; i < types.length; i++) {
    if (types[i] !== 'word') continue;
    words.push({
      value: values[i] ?? '',
      normal: normals[i] ?? '',
      stem: stems[i] ?? '',
      pos: pos[i] ?? '',
      stopWord: stop[i] === true,
    });
  }
  return words;
}

const CONTENT_POS = new Set(['NOUN', 'PROPN', 'ADJ', 'VERB', 'X']);

/**
 * Index terms: stems of content words. Stems rather than lemmas so that "hoppy", "hops" and
 * "hopping" meet, which matters more for matching short posts than linguistic accuracy.
 */
export function contentStems(text: string): string[] {
  return wordTokens(text)
    .filter((t) => !t.stopWord && t.stem.length >= 2 && CONTENT_POS.has(t.pos))
    .map((t) => t.stem);
}
