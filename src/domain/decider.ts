// A decider is plain data and functions: decide what happens, evolve the state by what happened.
export interface Decider<State, Command, Event> {
  initialState(): State;
  decide(command: Command, state: State): Event[];
  evolve(state: State, event: Event): State;
}

export function fold<State, Event>(decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>, events: Iterable<Event>): State {
  let state = decider.initialState();
  for (const event of events) state = decider.evolve(state, event);
  return state;
}

/**
 * A decider for a list of commands, each decided on the state the previous ones left: one
 * append (and one concurrency check) for a whole batch.
 */
export function batchOf<State, Command, Event>(decider: Decider<State, Command, Event>): Decider<State, Command[], Event> {
  return {
    initialState: decider.initialState,
    evolve: decider.evolve,
    decide(commands, state) {
      const events: Event[] = [];
      for (const command of commands) {
        const decided = decider.decide(command, state);
        state = decided.reduce(decider.evolve, state);
        events.push(...decided);
      }
      return events;
    },
  };
}
