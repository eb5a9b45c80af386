/// The version `entitle --version` prints and `entitle_build_info` exposes.
package enum EntitleVersion {
    package static let current = "0.12.0"
}
