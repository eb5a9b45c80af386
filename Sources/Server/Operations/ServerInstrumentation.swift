import Application
import JSON

/// What the use cases report: counted by `Metrics` and logged, each as the observation says.
struct ServerInstrumentation: Instrumentation {
    let metrics: Metrics
    let logger: Logger

    func record(_ observation: Observation) {
        metrics.record(observation)
        if let line = observation.logLine { logger.log(line.level, line.message, line.fields) }
    }
}
