import { describe, expect, it } from 'vitest';
import { createUploadSlots } from '../../services/verify/lists/upload-slots.js';

describe('list upload slots', () => {
  it('lets so many uploads write at once, hands a freed slot to the next, and answers 503 past the wait', async () => {
    const slots = createUploadSlots(2, 200);
    const first = await slots.acquire();
    const second = await slots.acquire();
    let thirdGranted = false;
    const third = slots.acquire().then((release) => {
      thirdGranted = true;
      return release;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(thirdGranted).toBe(false);
    first();
    first(); // a second release of one slot frees nothing more
    const releaseThird = await third;
    await expect(slots.acquire()).rejects.toMatchObject({ statusCode: 503 });
    second();
    releaseThird();
    const again = [await slots.acquire(), await slots.acquire()];
    await expect(slots.acquire()).rejects.toMatchObject({ statusCode: 503 });
    for (const release of again) release();
  });
});
