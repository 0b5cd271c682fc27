// Deciders tested as given(events).when(command).then(events) (docs/architecture.md): the history is
// folded with the decider's own evolve, the command decided on that state, and the answer is
// either the events decided or a typed domain error.
import * as assert from 'uvu/assert';
import { fold, type Decider } from '../../src/domain/decider.js';

type ErrorClass = abstract new (...args: never[]) => Error;

export interface When<State, Event> {
  /** The events decided, exactly. */
  then(expected: Event[]): void;
  /** Nothing happens: the decider answers with no events. */
  thenNothing(): void;
  /** The command breaks a rule: the decider throws this domain error (and message, if given). */
  thenThrows(errorClass: ErrorClass, message?: RegExp): void;
  /** The state after the decided events (for checking evolve). */
  state(): State;
}

export function deciderSpec<State, Command, Event>(decider: Decider<State, Command, Event>) {
  return {
    given(history: Event[] = []) {
      const state = fold(decider, history);
      return {
        when(command: Command): When<State, Event> {
          const decide = () => decider.decide(command, state);
          return {
            // biome-ignore lint/suspicious/noThenProperty: the Given/When/Then vocabulary of the deciders' specs; a When is never awaited
            then(expected) {
              assert.equal(decide(), expected);
            },
            thenNothing() {
              assert.equal(decide(), []);
            },
            thenThrows(errorClass, message) {
              let thrown: unknown;
              try {
                decide();
              } catch (error) {
                thrown = error;
              }
              assert.ok(thrown !== undefined, `expected ${errorClass.name}, but the decider answered`);
              assert.instance(thrown, errorClass);
              if (message) assert.match((thrown as Error).message, message);
            },
            state() {
              return decide().reduce(decider.evolve, state);
            },
          };
        },
      };
    },
  };
}
