"""The rules engine (no RL imports): cards, the rules and their numbers, action ids, the compiled kernels, the batched
engine and one game, the observation encoder, determinization, the replay format and games between agents."""
