/** The README's "Typed client" example, type-checked here (test/http/client.test.ts keeps the two equal). */
import { createQaClient, createVerifyClient } from './src/index.js';

const qa = createQaClient({ baseUrl: 'http://localhost:3000' });
const { data } = await qa.GET('/api/questions', { params: { query: { sort: 'votes', limit: 5 } } });
console.log(data?.data.questions.map((q) => q.title));

const verify = createVerifyClient({ baseUrl: 'http://localhost:3001', apiKey: process.env.KEY! });
const result = await verify.POST('/verify', { body: { email: 'someone@example.com' } });
console.log(result.data?.data.status, result.error?.message);
