"""Plugin manifests, the dependency union a trial loads and the behaviour-closure digest over exactly that set
(seed 001 rule 3). Boot, verdict and plan all ask here; it never starts anything and never hashes around a problem.
"""
