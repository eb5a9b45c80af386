enum ServeCommand {
    static func run(_ raw: [String]) throws -> Int32 {
        Output.error("entitle: serve is not built yet")
        return 1
    }
}
