// The Express example of the client README, as the tests run it (`answer` stands for the app's agent).
import express, { type NextFunction, type Request, type Response } from 'express';
import { observeHandler } from '../../index';

/** The README's Express app: each route wrapped in `observeHandler`, after `express.json()` where it takes a body. */
export function createChatApp(answer: (question: string) => Promise<string>): express.Express {
  const app = express();
  // One route: the stored input is { method: 'POST', path: '/chat/billing', body: { question: ... } }.
  app.post(
    '/chat/:topic',
    express.json(),
    observeHandler(async (req: Request<{ topic: string }>, res: Response) => {
      const reply = await answer(req.body.question);
      res.status(201).json({ topic: req.params.topic, answer: reply });
    }),
  );
  // A thrown error and one passed to next(error) both end the rollout `failed`; Express answers them as usual.
  app.get(
    '/throws',
    observeHandler(async () => {
      throw new Error('boom-thrown');
    }),
  );
  app.get(
    '/next-error',
    observeHandler((_req: Request, _res: Response, next: NextFunction) =>
      next(Object.assign(new Error('boom-next'), { status: 422 })),
    ),
  );
  return app;
}
