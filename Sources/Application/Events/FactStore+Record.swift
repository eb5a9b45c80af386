import Entitlements

/// How use cases write: through the store, then, once the transaction has committed, the app's
/// event writer is told what it put in the outbox (counted, deliverers woken). The store itself
/// never calls back up.
extension FactStore {
    /// `outbox` composes the batch's events (inside the write) and hears of them after the commit;
    /// nil for writes that cause none.
    func record(_ batch: FactBatch, outbox: AppEventWriter? = nil) throws -> ApplyOutcome {
        let applied = try write(Self.composing(batch, outbox))
        if applied.wroteToOutbox { outbox?.committed(applied.events) }
        return applied.outcome
    }

    func record(
        _ batch: FactBatch, outbox: AppEventWriter? = nil, completion: @escaping @Sendable (Result<ApplyOutcome, any Error>) -> Void
    ) {
        write(Self.composing(batch, outbox)) { result in
            if case .success(let applied) = result, applied.wroteToOutbox { outbox?.committed(applied.events) }
            completion(result.map(\.outcome))
        }
    }

    /// The same, awaited (use cases that are async already).
    @discardableResult
    func record(_ batch: FactBatch, outbox: AppEventWriter? = nil) async throws -> ApplyOutcome {
        try await withCheckedThrowingContinuation { continuation in record(batch, outbox: outbox) { continuation.resume(with: $0) } }
    }

    private static func composing(_ batch: FactBatch, _ outbox: AppEventWriter?) -> FactBatch {
        var batch = batch
        if let outbox { batch.eventWriter = outbox.composer }
        return batch
    }
}
