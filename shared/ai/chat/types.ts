/** Shapes shared by the chat composer, the external provider and the engine. */

/** One hit of the injected retrieval (PostgreSQL full-text search over questions and answers). */
export interface RetrievedPost {
  questionId: number;
  /** Absent when the hit is the question itself rather than one of its answers. */
  answerId?: number;
  title: string;
  /** Plain text or HTML; a few hundred characters around the match is plenty. */
  excerpt: string;
  votes: number;
  isAccepted: boolean;
}

export type Retrieve = (query: string) => Promise<RetrievedPost[]>;

export interface ChatSource {
  type: 'question' | 'answer';
  id: number;
  /** The thread the post belongs to (equals `id` for a question), so a client can link an answer. */
  questionId: number;
  title: string;
  url?: string;
  /** Relevance in [0, 1], relative to the best source of this reply. */
  score: number;
}

export interface ChatResult {
  reply: string;
  sources: ChatSource[];
  /** Which composer wrote the reply; 'local' also after a provider failure. */
  generatedBy: 'local' | 'provider';
}

/** Builds a link to a post for the `url` of a source; injected because only the app knows its base URL. */
export type SourceUrl = (questionId: number, answerId?: number) => string;

/** A retrieved post after ranking, with the sentences that best match the query. */
export interface RankedPost {
  post: RetrievedPost;
  score: number;
  sentences: string[];
}
