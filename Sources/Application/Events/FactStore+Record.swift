import Entitlements

/// How use cases write: through the store, then, once the transaction has committed, the app's
/// event writer is told what it put in the outbox (counted, deliverers woken). The store itself
/// never calls back up.
extension FactStore {
    func record(_ batch: FactBatch) throws -> ApplyOutcome {
        let applied = try write(batch)
        announce(applied, of: batch)
        return applied.outcome
    }

    func record(_ batch: FactBatch, completion: @escaping @Sendable (Result<ApplyOutcome, Error>) -> Void) {
        write(batch) { result in
            if case .success(let applied) = result { announce(applied, of: batch) }
            completion(result.map(\.outcome))
        }
    }

    private func announce(_ applied: AppliedBatch, of batch: FactBatch) {
        guard applied.wroteToOutbox, let writer = batch.eventWriter as? AppEventWriter else { return }
        writer.committed(applied.events)
    }
}
