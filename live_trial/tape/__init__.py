"""The model's side of a real trial on a tape: the recording proxy in front of the model's API, the tape file and what
is taken out of each request, the server that replays a tape as a rehearsal, and a scenario written from a tape.
It never writes a credential, and a replay is never a live trial: it is a rehearsal whose script is a recording.
"""
